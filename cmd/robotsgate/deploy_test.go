package main

// Tests of the container files at the repository root. There is no Docker
// engine on the development machines: docker-compose.yml is loaded with
// the real compose parser (compose-go, a test-only dependency: it is not
// linked into the binary) and the Dockerfile is parsed here, and both are
// checked against the real binary's subcommands, flags and environment
// variables.

const repoRoot = "../.."
