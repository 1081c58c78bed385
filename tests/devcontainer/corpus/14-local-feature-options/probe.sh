echo "id: $(id)"
echo "pwd: $(pwd)"
cat /greeter
