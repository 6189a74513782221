#!/usr/bin/env bash
# The site half of `make test`'s stage 2: build the book ($1, a command line), then run the browser tests ($2)
# against it. Both are timed; the first failure stops it with that exit code. The Makefile runs this in the
# background while the unit tests run, and prints its output when both are done.
set -u
start=$(date +%s)
bash -c "$1" || { rc=$?; echo "site stage: the book build failed (exit $rc)"; exit $rc; }
built=$(date +%s)
echo "site stage: book built in $((built - start)) s"
bash -c "$2" || { rc=$?; echo "site stage: the browser tests failed (exit $rc)"; exit $rc; }
echo "site stage: browser tests in $(($(date +%s) - built)) s"
