#!/bin/sh
set -e
echo "oci $GREETING $HELLO_FROM" >> /tmp/features
