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
// The manifests are KubeVirt's as its users write them, but for the
// registry in their image references, registry.example (RFC 2606): the
// platform never pulls them, and the project names no registry's host
// (internal/boundary's TestNoRegistryHost).
//
// It owns the manifests and their expectations; it must not import the
// platform's packages, so that any test can use it.
package compat
