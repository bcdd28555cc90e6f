// Package load is the reliability suite's load generator and its
// accounting: a storm of VirtualMachine creates, updates and deletes from
// several clients through the aggregator, every request recorded (when,
// what, how it ended), and after the storm the figures a fault is judged
// by: acknowledged writes lost, the failed share of requests, the downtime
// and the time to full capacity (Definitions says exactly how each is
// measured).
//
// The VMs it writes have runStrategy Halted, so no launcher pod ever
// starts: the storm measures the API path alone. Its clients are what a
// user runs: the generated typed clientset with client-go's behaviour,
// no retries of its own.
//
// It imports the platform's API types and clientset only, never a
// component or the e2e framework: the suite hands it a client.
package load
