package app

import (
	"vetlens/app/repo"
	"vetlens/internal/fairgate"
	"vetlens/internal/membudget"
)

// The features and their ports. Each feature type names exactly the
// repositories (a ports struct of its own), engines and other features
// it uses; compose builds them once, in dependency order, from Deps.
// They share the measuring machinery (measurer: the cardiac slots and
// the pixel budget) and the free-space guard, so that one budget bounds
// the whole process whichever feature is called.

// accountsRepos are the repositories of the key and billing use cases.
type accountsRepos struct {
	Keys      repo.Keys
	Customers repo.Customers
	Ledger    repo.Ledger
}

// Accounts are the API keys, the customers and their rates, and the
// billing ledger: CreateKey, Authenticate, Meter, MonthlyStatement.
type Accounts struct {
	repos accountsRepos
	clock Clock
	cfg   Config
}

// measurer is the measuring machinery the features share: the cardiac
// engine behind its concurrency slots, the screen-aware single
// prediction and the process-wide pixel memory budget.
type measurer struct {
	cardiac      CardiacEngine
	popMeasure   PoPMeasurer
	cardiacSlots *fairgate.Gate
	pixels       *membudget.Budget
}

// cardiacRepos are the repositories of the cardiac predictions: the
// uuid's history (historic_vhs, and the record of a valid result).
type cardiacRepos struct {
	History repo.History
}

// Cardiac is the single-image cardiac use cases: PredictSingle and
// PredictBatch (API), MeasureDesktop (desktop, DICOM included) and
// PredictLocal (`vetlens predict`). Each measurement is metered through
// Accounts.
type Cardiac struct {
	*measurer
	repos    cardiacRepos
	clock    Clock
	accounts *Accounts
	disk     *diskGuard
}

// Sessions is the PoP capture sessions (StartSession and SessionFrame
// for the API, StartDesktopSession, StartLocalSession) and the PoP
// pipeline's one-image calls (DetectCorners, Rectify, Preprocess). A
// complete session is metered through Accounts and recorded through
// Cardiac.
type Sessions struct {
	*measurer
	pop        PoP
	cfg        Config
	accounts   *Accounts
	cardiacUse *Cardiac
	status     *Status
	disk       *diskGuard
}

// patientsRepos are the repositories of the patient use cases.
type patientsRepos struct {
	Patients repo.Patients
	History  repo.History
	USGLog   repo.USGLog
	Audit    repo.Audit
}

// Patients is the patient records and everything kept for a patient:
// details, the cardiac and USG history, saving, reopening, correcting
// and hiding desktop measurements, the audit trail, and a patient's
// reports to PACS.
type Patients struct {
	repos    patientsRepos
	clock    Clock
	accounts *Accounts
	disk     *diskGuard
}

// usgRepos are the repositories of the USG use cases: the USG log (a
// patient's last screening; each prediction is logged with its billing
// through Accounts).
type usgRepos struct {
	USGLog repo.USGLog
}

// USG is the USG predictions: PredictUSG (API), ScreenBloodwork
// (desktop) and PredictUSGLocal (`vetlens usg`).
type USG struct {
	usg      USGEngine
	repos    usgRepos
	clock    Clock
	accounts *Accounts
	patients *Patients
	disk     *diskGuard
}

// learningRepos are the repositories the learning pool is filled from.
type learningRepos struct {
	History  repo.History
	Patients repo.Patients
}

// Learning is the on-site learning pool's use case: SyncPool.
type Learning struct {
	repos learningRepos
}

// Status is what the process reports about itself: CardiacHealth,
// USGHealth, Models, Disk (with CheckWritable) and PixelStats.
type Status struct {
	cardiac CardiacEngine
	usg     USGEngine
	pop     PoP
	disk    *diskGuard
	pixels  *membudget.Budget
}

// compose builds the features from checked Deps and Config (New).
func compose(d Deps, cfg Config) *Service {
	r := d.Repos
	disk := &diskGuard{probe: d.Disk, clock: d.Clock}
	m := &measurer{cardiac: d.Cardiac, popMeasure: d.PoPMeasurer,
		cardiacSlots: fairgate.New(cfg.CardiacConcurrency),
		pixels:       membudget.New(membudget.Config{Capacity: cfg.PixelBudget, Wait: cfg.PixelWait})}
	accounts := &Accounts{repos: accountsRepos{Keys: r.Keys, Customers: r.Customers, Ledger: r.Ledger}, clock: d.Clock, cfg: cfg}
	status := &Status{cardiac: d.Cardiac, usg: d.USG, pop: d.PoP, disk: disk, pixels: m.pixels}
	cardiacs := &Cardiac{measurer: m, repos: cardiacRepos{History: r.History}, clock: d.Clock,
		accounts: accounts, disk: disk}
	patients := &Patients{repos: patientsRepos{Patients: r.Patients, History: r.History, USGLog: r.USGLog, Audit: r.Audit},
		clock: d.Clock, accounts: accounts, disk: disk}
	return &Service{
		Accounts: accounts,
		Cardiac:  cardiacs,
		Sessions: &Sessions{measurer: m, pop: d.PoP, cfg: cfg, accounts: accounts, cardiacUse: cardiacs, status: status, disk: disk},
		Patients: patients,
		USG: &USG{usg: d.USG, repos: usgRepos{USGLog: r.USGLog}, clock: d.Clock,
			accounts: accounts, patients: patients, disk: disk},
		Learning: &Learning{repos: learningRepos{History: r.History, Patients: r.Patients}},
		Status:   status,
		repos:    r,
	}
}

// Engine is the loaded cardiac engine or nil.
func (s *Cardiac) Engine() CardiacEngine { return s.cardiac }

// Engine is the loaded USG engine or nil.
func (s *USG) Engine() USGEngine { return s.usg }

// Pipeline is the loaded PoP pipeline or nil.
func (s *Sessions) Pipeline() PoP { return s.pop }
