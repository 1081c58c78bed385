echo "id: $(id)"
echo "pwd: $(pwd)"
cat /cache/v
