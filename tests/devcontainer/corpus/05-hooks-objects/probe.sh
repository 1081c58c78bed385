echo "id: $(id)"
echo "pwd: $(pwd)"
echo "--- order (sorted: parallel)"; sort /tmp/order 2>/dev/null
