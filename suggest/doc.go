// Package suggest suggests a likely cause for a backup's error or warning
// text.
//
// The suggestions come from a fixed, deterministic rule catalogue
// (catalogue.go): patterns over the lowercased text, some for one vendor and
// most for all of them. [For] tries the rules of the text's vendor first and
// then the general ones, each in table order, and the first rule that
// matches gives the [Suggestion]. The wording of every suggestion says it is
// a suggestion, never a diagnosis; alerts whose text matches no rule carry no
// suggestion (decisions.md 4.6 and 10).
package suggest
