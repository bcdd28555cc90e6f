// Package fakelauncher is a scripted launcher for the node's unit tests: a
// real gRPC server of launcher/api/v1 on a real unix socket (bound through
// node/socket, so at paths as long as the kubelet's), whose domain a test
// moves through its states and whose calls it inspects. It follows the
// contract of docs/launcher.md: Sync defines and starts once and is
// idempotent, WatchDomain sends the current domain first and ends after the
// final STOPPED event, the final state is written to the private directory.
//
// Only tests import it. The real launcher is tested in launcher/ and
// test/integration/launcher.
package fakelauncher
