#!/bin/sh
echo hooked >> /tmp/features
