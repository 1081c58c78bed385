echo "id: $(id)"
echo "pwd: $(pwd)"
cat /scratch/t
grep -c ' /scratch ' /proc/mounts
