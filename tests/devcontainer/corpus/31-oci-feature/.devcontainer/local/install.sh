#!/bin/sh
echo "local first" >> /tmp/features
