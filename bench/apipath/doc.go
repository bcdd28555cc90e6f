// Package apipath measures the API path (issue 9, part 1): our aggregated
// API against its CRD + webhooks twin and against a built-in resource
// (ConfigMaps of the same size), all driven by the same load generator
// with pre-encoded bodies, through the kube-apiserver and directly to
// virt-apiserver's Service in protobuf. It reports creates/s and create
// latency at several concurrencies, GET latency, LIST of 1k and 10k objects,
// and the servers' memory with 10k objects.
//
// While it runs, virt-controller is scaled to zero: 10k VMIs must not turn
// into 10k launcher pods, and the twin has no controller reacting to its
// objects either, so both sides measure the API path alone.
package apipath
