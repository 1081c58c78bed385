echo "id: $(id)"
echo "pwd: $(pwd)"
echo "P=${P-unset}"
