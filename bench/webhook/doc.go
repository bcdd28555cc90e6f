// Package webhook is the admission webhook server of the CRD twin: a
// mutating webhook that applies our API's defaults (the v1 SetDefaults
// functions, through the scheme) and a validating webhook that runs our
// validation (apis/virtualization/validation), exactly what virt-apiserver
// does in-process, done the way CRD-based platforms do it: over HTTPS, one
// AdmissionReview per request.
//
// It imports the API packages only, never the apiserver.
package webhook
