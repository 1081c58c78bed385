echo "id: $(id)"
echo "pwd: $(pwd)"
echo "A=${A-unset}"
echo "--- order"; cat /tmp/order 2>/dev/null
