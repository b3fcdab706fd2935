package errs

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// TestHide: a hidden cause is out of Error and in Chain, errors.Is and
// errors.As, through %w wrapping and joined errors.
func TestHide(t *testing.T) {
	sentinel := errors.New("corrupt file")
	lib := fmt.Errorf("new limit exceeds current limit of buffer, new limit: 4294967439: %w", io.ErrUnexpectedEOF)
	for _, tc := range []struct {
		name        string
		err         error
		text, chain string
		hidden      bool
	}{
		{"plain", fmt.Errorf("%w: short", sentinel), "corrupt file: short", "corrupt file: short", false},
		{"hidden", fmt.Errorf("%w: %w", sentinel, Hide("the data set could not be parsed", lib)),
			"corrupt file: the data set could not be parsed",
			"corrupt file: the data set could not be parsed [the data set could not be parsed: new limit exceeds current limit of buffer, new limit: 4294967439: unexpected EOF]", true},
		{"joined", errors.Join(sentinel, Hide("bad header", lib)), "corrupt file\nbad header",
			"corrupt file\nbad header [bad header: new limit exceeds current limit of buffer, new limit: 4294967439: unexpected EOF]", true},
		{"nil cause", Hide("plain", nil), "plain", "plain", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.text {
				t.Errorf("Error() = %q, want %q", got, tc.text)
			}
			if got := Chain(tc.err); got != tc.chain {
				t.Errorf("Chain = %q, want %q", got, tc.chain)
			}
			if Hidden(tc.err) != tc.hidden {
				t.Errorf("Hidden = %v", !tc.hidden)
			}
			if tc.hidden && (!errors.Is(tc.err, io.ErrUnexpectedEOF) || !errors.Is(tc.err, sentinel)) {
				t.Errorf("the chain lost a cause: %v", tc.err)
			}
		})
	}
	if Chain(nil) != "" {
		t.Error("Chain(nil)")
	}
}
