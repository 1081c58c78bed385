echo "id: $(id)"
echo "pwd: $(pwd)"
cat /tmp/hook-user
echo "WHO=${WHO-unset}"
