#!/bin/sh
echo "first $FIRST_HOME" >> /tmp/features
