echo "id: $(id)"
echo "pwd: $(pwd)"
cat /proc/1/cmdline | tr '\0' ' '; echo
