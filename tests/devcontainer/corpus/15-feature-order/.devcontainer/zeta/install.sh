#!/bin/sh
echo zeta >> /tmp/features
