#!/bin/sh
echo "second sees $FIRST_HOME" >> /tmp/features
