echo "id: $(id)"
echo "pwd: $(pwd)"
echo "FROM_RUN_ARGS=${FROM_RUN_ARGS-unset}"
echo "SECOND=${SECOND-unset}"
grep db.internal /etc/hosts | tr -s ' \t' ' '
grep CapEff /proc/self/status
