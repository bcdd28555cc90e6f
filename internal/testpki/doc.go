// Package testpki makes certificate authorities and leaf certificates for
// tests, shaped like those hack/cluster/certs.sh issues (ECDSA P-256, one
// extended key usage each), and writes them as the ca.crt, tls.crt, tls.key
// directory a kubernetes.io/tls Secret is mounted as.
//
// Only tests and test-support packages (named like httptest) import it. It must not import controllers/ or node/.
package testpki
