echo "id: $(id)"
echo "pwd: $(pwd)"
ls -a /ctx | sort
