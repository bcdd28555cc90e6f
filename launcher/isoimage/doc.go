// Package isoimage writes the small read-only ISO 9660 images the launcher
// hands a guest: the NoCloud seed, the OpenStack config drive and the disks
// of config volumes (ConfigMap, Secret, downward API, service account,
// sysprep). It is pure Go, so the launcher image needs no xorrisofs.
//
// The names are plain ISO 9660 names (no Rock Ridge, no Joliet): Linux's
// isofs shows them in lower case, with every character outside ISO 9660's
// d1 set as "_" and all dots but the last as "_". The label is kept as
// given. KubeVirt writes Rock Ridge names with xorrisofs; a key such as
// "Config.Yaml" reads "config.yaml" here.
//
// It reads no tenant file itself: callers hand it contents they bounded.
package isoimage
