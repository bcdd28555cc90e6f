// Package compat holds KubeVirt manifests, written for kubevirt.io/v1 (or
// instancetype.kubevirt.io/v1beta1, for instancetypes and preferences) as
// KubeVirt's users write them, and what this platform does with each once
// its apiVersion is changed to virtualization.kubevirt.io/v1: accept it, or
// refuse it with a 422 whose field paths and messages say what is not
// supported and why. Never with "unknown field".
//
// The unit test of apis/virtualization/validation decodes, defaults and
// validates every manifest as the API server does; an e2e test can send the
// same manifests to a cluster (kubectl create --dry-run=server) and hold the
// answers to the same expectations.
//
// The corpora (corpus.go) are manifests written by others, read where they
// are kept as published (../shared/kubevirt-manifests, or
// $VIRT_KUBEVIRT_MANIFESTS), never copied into the project: the
// KubeVirt user guide's and blogs', common-templates', Harvester's and
// others' (userguide), KubeVirt's own examples (examples), and the
// instancetypes and preferences those take for granted (setup, the test's
// and not the product's). One expectation file, corpora/EXPECT.tsv, says
// what the server answers to each; test/integration/apiserver's
// TestCorpora holds the server to it, so that a new refusal fails.
//
// The manifests are KubeVirt's as its users write them, but for the
// registry in their image references, registry.example (RFC 2606): the
// platform never pulls them, and the project names no registry's host
// (internal/boundary's TestNoRegistryHost).
//
// It owns the manifests and their expectations; it must not import the
// platform's packages, so that any test can use it.
package compat
