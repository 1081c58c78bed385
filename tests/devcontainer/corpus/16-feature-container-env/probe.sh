echo "id: $(id)"
echo "pwd: $(pwd)"
echo "FIRST_HOME=${FIRST_HOME-unset}"
cat /tmp/features
