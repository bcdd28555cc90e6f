// Package server is the launcher's gRPC service: a thin façade that serves
// the node <-> launcher contract (launcher/api/v1) over the parts that own
// the work, each with its own lock:
//
//   - launcher/supervisor: the domain (define, start, pause, shutdown and its
//     enforcement, libvirt's events, the final state) and its event stream;
//   - launcher/lease: the guests' DHCP servers;
//   - launcher/guestagent: what the guest agent reports, asked off every
//     call's path.
//
// It checks that a request is this launcher's, wires the parts together and
// turns their errors into the contract's codes (apiv1.SyncErrorIsPermanent);
// it keeps no state of its own.
package server
