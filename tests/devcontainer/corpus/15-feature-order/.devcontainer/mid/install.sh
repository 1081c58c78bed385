#!/bin/sh
echo mid >> /tmp/features
