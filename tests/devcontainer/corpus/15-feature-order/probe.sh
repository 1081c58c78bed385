echo "id: $(id)"
echo "pwd: $(pwd)"
cat /tmp/features
