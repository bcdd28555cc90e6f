// Package badinput is a corpus of requests a careless or hostile client
// sends to the VirtualMachineInstance collection - the fuzzer's seeds,
// hand-written nasty bodies (deep nesting, huge strings, bodies at and past
// the 3 MiB limit, invalid UTF-8, duplicate keys, numbers out of range,
// garbage protobuf) and seeded random mutations of a valid VMI, posted, put
// and patched in every patch type - with how to send one and how to judge
// the answer: taken (2xx) or refused as the client's fault, never a server
// error but the upstream defects pinned here.
//
// The in-process server's integration test (test/integration/apiserver)
// and the reliability suite on the real cluster (test/reliability) send
// the same cases. It imports the API types only, never the server.
package badinput
