echo "id: $(id)"
echo "pwd: $(pwd)"
echo "INSIDE=${INSIDE-unset}"
echo "BASENAME=${BASENAME-unset}"
cat /tmp/where
ls /srv
