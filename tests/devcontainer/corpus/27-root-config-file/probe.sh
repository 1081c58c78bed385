echo "id: $(id)"
echo "pwd: $(pwd)"
echo "WHERE=${WHERE-unset}"
echo "--- order"; cat /tmp/order 2>/dev/null
