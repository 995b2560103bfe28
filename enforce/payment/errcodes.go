package payment

import (
	"net/http"
	"strings"
)

// ErrorCode is a crawler-error code an origin sends with a refusal.
type ErrorCode string

// The codes of the wire contract.
const (
	CodeCrawlerForbidden         ErrorCode = "CrawlerForbidden"
	CodeStrongAuthRequired       ErrorCode = "StrongAuthRequired"
	CodeInvalidSignature         ErrorCode = "InvalidSignature"
	CodeInvalidCrawlerPriceValue ErrorCode = "InvalidCrawlerPriceValue"
	CodeConflictingPriceHeaders  ErrorCode = "ConflictingPriceHeaders"
	CodeMissingCrawlerPrice      ErrorCode = "MissingCrawlerPrice"
	CodeInvalidCrawlerExactPrice ErrorCode = "InvalidCrawlerExactPrice"
	CodeInvalidCrawlerMaxPrice   ErrorCode = "InvalidCrawlerMaxPrice"
	CodePaymentFailed            ErrorCode = "PaymentFailed"
	CodeInvalidContentPrice      ErrorCode = "InvalidContentPrice"
	CodeInternalError            ErrorCode = "InternalError"
)

// Action is what robotsgate does about a crawler-error code.
type Action int

// Actions, by what the code means.
const (
	// ActionNone: not a code of the contract (or none); the response is
	// treated by its status alone.
	ActionNone Action = iota
	// ActionStop: the origin refuses this crawler or its payment; no
	// retry, nothing is paid, the answer goes to the client.
	ActionStop
	// ActionFix: the request robotsgate sent was malformed (its
	// signature or price header): no retry, audited, as it needs an
	// operator (a key, a setting) or a fix.
	ActionFix
	// ActionRequote: the price changed or was not accepted; read the new
	// crawler-price of this 402 and retry once with it.
	ActionRequote
	// ActionBackoff: the origin failed; pause it through the backoff
	// machinery (as a 503) and do not retry now.
	ActionBackoff
)

// String names the action in audit records and logs.
func (a Action) String() string {
	switch a {
	case ActionStop:
		return "stop"
	case ActionFix:
		return "fix"
	case ActionRequote:
		return "requote"
	case ActionBackoff:
		return "backoff"
	}
	return "none"
}

// CodeInfo is what the contract says of a code: the status it comes
// with, and what to do.
type CodeInfo struct {
	Status int
	Action Action
}

// codes is the table of the contract's error codes.
var codes = map[ErrorCode]CodeInfo{
	CodeCrawlerForbidden:         {http.StatusForbidden, ActionStop},
	CodePaymentFailed:            {http.StatusForbidden, ActionStop},
	CodeStrongAuthRequired:       {http.StatusBadRequest, ActionFix},
	CodeInvalidSignature:         {http.StatusBadRequest, ActionFix},
	CodeInvalidCrawlerPriceValue: {http.StatusBadRequest, ActionFix},
	CodeConflictingPriceHeaders:  {http.StatusBadRequest, ActionFix},
	CodeMissingCrawlerPrice:      {http.StatusPaymentRequired, ActionRequote},
	CodeInvalidCrawlerExactPrice: {http.StatusPaymentRequired, ActionRequote},
	CodeInvalidCrawlerMaxPrice:   {http.StatusPaymentRequired, ActionRequote},
	CodeInvalidContentPrice:      {http.StatusBadGateway, ActionFix},
	CodeInternalError:            {http.StatusInternalServerError, ActionBackoff},
}

// Codes returns the contract's codes and what each means (a copy).
func Codes() map[ErrorCode]CodeInfo {
	m := make(map[ErrorCode]CodeInfo, len(codes))
	for k, v := range codes {
		m[k] = v
	}
	return m
}

// maxCodeLen bounds the code quoted in audit records.
const maxCodeLen = 64

// ParseError reads the crawler-error header of a response: the code (as
// sent, trimmed and cut to a bounded length, for the audit record) and
// what to do. A code outside the contract, or none, is [ActionNone]. The
// code decides, whatever status it came with (a [CodeInternalError] on a 503
// still backs off). Codes are matched exactly, as the contract spells
// them.
func ParseError(h http.Header) (ErrorCode, Action) {
	v := strings.Trim(h.Get(HeaderError), " \t")
	if v == "" {
		return "", ActionNone
	}
	if len(v) > maxCodeLen {
		v = v[:maxCodeLen]
	}
	code := ErrorCode(v)
	info, ok := codes[code]
	if !ok {
		return code, ActionNone
	}
	return code, info.Action
}
