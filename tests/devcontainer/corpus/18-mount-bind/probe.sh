echo "id: $(id)"
echo "pwd: $(pwd)"
cat /data/file
touch /data/x 2>/dev/null && echo writable || echo readonly
