#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not a test of sdp: the harness's self-test (scripts/check-guest) runs this
# through run_kselftest.sh with a short timeout and expects a TIMEOUT, then
# nothing of it left. Like a case of the C harness, its child sits in a
# process group of its own, out of timeout's reach, holding our output.
set -m
sleep 4242 &
sleep 4243
