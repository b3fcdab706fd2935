package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"vetlens/app"
	"vetlens/app/importq"
)

// watchImports measures the new files of the import folder dir until ctx
// ends (`vetlens serve --import-dir`), logging each result: the headless
// server has no one to review them, so nothing is saved to a history.
func watchImports(ctx context.Context, svc *app.Service, dir string, log *slog.Logger) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("import folder %q: not a readable folder", dir)
	}
	logged := map[int]bool{}
	var q *importq.Queue
	q = importq.New(importq.Config{Dir: dir, KeepMeasurements: 1}, func(ctx context.Context, b []byte) (*app.Measurement, error) {
		return svc.Cardiac.MeasureDesktop(ctx, "", b)
	})
	q.OnChange(func() {
		items := q.Items()
		for seq := range logged {
			if len(items) == 0 || seq < items[0].Seq {
				delete(logged, seq) // gone from the list
			}
		}
		for _, it := range items {
			if logged[it.Seq] || (it.State != importq.Done && it.State != importq.Failed) {
				continue
			}
			logged[it.Seq] = true
			if it.State == importq.Failed {
				log.Warn("import: not measured", "file", it.Name, "err", it.Err)
				continue
			}
			if m := it.Measurement; m != nil && m.Result != nil {
				log.Info("import: measured", "file", it.Name, "patient", m.PatientID, "result_code", int(m.Result.Code),
					"vhs", valueText(m.Result.VHS), "vlas", valueText(m.Result.VLAS))
			}
		}
	})
	log.Info("watching the import folder", "dir", dir)
	go q.Run(ctx)
	return nil
}

// valueText is a VHS or VLAS for the log ("-" when withheld).
func valueText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}
