echo "id: $(id)"
echo "pwd: $(pwd)"
echo "id length ${#ID_LENGTH}"
