package cli

import (
	"log/slog"

	"fyne.io/fyne/v2"

	"vetlens/ui"
)

// openAtStart opens path on the Review tab once the window is up (`vetlens
// gui --open FILE`); a measurement failure shows there, a file that cannot
// be read is logged.
func openAtStart(u *ui.UI, path string, log *slog.Logger) {
	fyne.Do(func() {
		u.SelectTab("Review")
		if err := u.OpenFile(path); err != nil {
			log.Error("--open", "file", path, "err", err)
		}
	})
}
