#!/bin/sh
echo alpha >> /tmp/features
