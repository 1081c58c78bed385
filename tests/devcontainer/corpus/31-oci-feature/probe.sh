echo "id: $(id)"
echo "pwd: $(pwd)"
echo "HELLO_FROM=${HELLO_FROM-unset}"
cat /tmp/features
