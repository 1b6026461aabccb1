package web

import (
	"net/http"

	"github.com/closer-lab/closer/internal/collect"
	"github.com/closer-lab/closer/internal/study"
	"github.com/closer-lab/closer/templates"
)

// participantsShown is how many participants the study page lists.
const participantsShown = 50

// studyPage fills the study page's view.
func (s *Server) studyPage(r *http.Request, st study.Study) (templates.StudyPage, error) {
	stats, err := s.store.StudyStats(r.Context(), st.ID)
	if err != nil {
		return templates.StudyPage{}, err
	}
	items, err := s.store.ListItems(r.Context(), st.ID)
	if err != nil {
		return templates.StudyPage{}, err
	}
	ps, err := s.store.ListParticipants(r.Context(), st.ID, participantsShown)
	if err != nil {
		return templates.StudyPage{}, err
	}
	if !identifyingFrom(r.Context()) { // a viewer's page (issue 30)
		for i := range ps {
			ps[i].ExternalID = ""
		}
	}
	v := templates.StudyPage{Study: st, Stats: stats, Participants: ps, PublicURL: s.publicURL("/s/" + st.Slug), Can: canFrom(r.Context())}
	v.Recruit = st.Platform.RecruitLinks(v.PublicURL)
	if v.Designs, err = s.store.DesignStatuses(r.Context(), st); err != nil {
		return templates.StudyPage{}, err
	}
	if v.GoldTriplets, err = s.store.GoldTripletCount(r.Context(), st.ID); err != nil {
		return templates.StudyPage{}, err
	}
	if v.Previews, err = s.store.CountPreviews(r.Context(), st.ID); err != nil {
		return templates.StudyPage{}, err
	}
	if v.Estimate, err = s.estimateView(r.Context(), st, len(items), stats.Answers); err != nil {
		return templates.StudyPage{}, err
	}
	for _, it := range items {
		v.Items = append(v.Items, itemFace(itemRef(it)))
	}
	return v, nil
}

// studyMessages are the study page's notes after an action, by the msg
// parameter the action redirects with.
var studyMessages = map[string]string{
	"saved":            "Changes saved.",
	"open":             "The study is open: participants can start and answer.",
	"paused":           "The study is paused: participants see a notice and keep their progress until you open it again.",
	"closed":           "The study is closed: it takes no more answers.",
	"gold":             "Gold triplets stored: catch trials ask them first.",
	"previews-deleted": "The previews and their answers are deleted.",
	"estimated":        "Costs saved and the answers estimated (How many answers, below).",
}

// showStudy is a study's page for the researcher (GET /admin/studies/{slug}),
// with the note of the action that led here (msg) and the report of the
// upload that did (upload).
func (s *Server) showStudy(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	v, err := s.studyPage(r, st)
	if err != nil {
		return err
	}
	v.Message = studyMessages[r.URL.Query().Get("msg")]
	if id := r.URL.Query().Get("upload"); id != "" {
		rep, err := s.store.UploadReportByID(r.Context(), st.ID, id)
		switch {
		case collect.KindOf(err) == study.KindNotFound:
			v.Message = "The report of that upload has expired (reports are kept for a day); the items below are the study's."
		case err != nil:
			return err
		default:
			v.Upload = &rep
		}
	}
	return s.render(w, r, http.StatusOK, templates.StudyShowPage(v))
}

// setStudyStatus opens, pauses or closes a study from its page
// (POST /admin/studies/{slug}/status).
func (s *Server) setStudyStatus(w http.ResponseWriter, r *http.Request) error {
	st, err := s.studyFromURL(r)
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return badRequest("unreadable form")
	}
	status := r.PostForm.Get("status")
	if _, ok := studyMessages[status]; !ok || status == "saved" {
		return badRequest("status must be open, paused or closed")
	}
	err = s.store.SetStudyStatus(r.Context(), st.ID, status)
	if formError(err) {
		v, perr := s.studyPage(r, st)
		if perr != nil {
			return perr
		}
		v.Error = userMessage(err)
		return s.render(w, r, http.StatusUnprocessableEntity, templates.StudyShowPage(v))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/admin/studies/"+st.Slug+"?msg="+status, http.StatusSeeOther)
	return nil
}
