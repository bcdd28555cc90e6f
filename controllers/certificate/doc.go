// Package certificate is virt-controller's approver and signer of the
// certificates.k8s.io CertificateSigningRequests of signer
// internal/servingcert.SignerName: the guest-access serving certificates
// the virt-handlers request for their nodes (docs/guest-access.md), in the
// pattern of the kubelet's serving certificates. A second instance, with
// Profile Migration and a CA of its own, approves and signs the handlers'
// migration identities (internal/migrationcert.SignerName: clientAuth and
// serverAuth, no IP address, docs/migration.md) by the same policy.
//
// Approval (approve.go) is the policy: a request is approved only when its
// requester is the handlers' service account with a bound token whose
// node-name claim (spec.extra authentication.kubernetes.io/node-name) is
// the node the request names — as common name system:virt-handler:NODE and
// as its one DNS name — its IP addresses are those of the requesting
// handler pod (the token's pod-name and pod-uid claims) on that node, and
// it asks for a serving certificate and nothing else. Anything else is
// Denied with the reason, so one node cannot obtain a certificate that
// answers for another.
//
// Signing (sign.go) issues, for an approved request of the right shape, a
// serverAuth-only certificate from the handler serving CA read from files
// (a Secret only virt-controller mounts), re-read for every signature so a
// new CA needs no restart; its lifetime is the request's
// spec.expirationSeconds capped by the signer's maximum and the CA's own.
//
// It sees only its signer's requests (a field selector on
// spec.signerName), writes only their approval and status, and reads the
// requesting handler pods. It must not import node/ or apiserver/.
package certificate
