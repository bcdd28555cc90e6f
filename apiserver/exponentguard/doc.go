// Package exponentguard refuses a request body holding an absurd number - a
// decimal exponent beyond ±MaxExponent or more than MaxDigits digits -
// before anything decodes it.
//
// resource.Quantity (k8s.io/apimachinery v0.37) takes unbounded time on such
// values: parsing "1e-1000000000" builds a number of a billion digits, and
// comparing a parsed "1e1000000000" with anything does the same, so one
// request holds a CPU until its 60 s timeout and answers 504; a million
// digits take it seconds. The upstream
// fixes (kubernetes/kubernetes#141306, #142013) are not released. Quantities
// are decoded deep inside the JSON and protobuf unmarshallers and the
// structured-merge-diff of server-side apply, so the one place that sees
// every encoding of every write is the body, before the handler reads it.
//
// Quantities accept both forms, "1e3" and 1e3, so strings and numbers are
// checked; no real resource amount needs an exponent beyond a few dozen.
package exponentguard
