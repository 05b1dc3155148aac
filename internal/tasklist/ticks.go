package tasklist

// DoneCounts is how many tasks of each story are done, by story id.
func (t Tasks) DoneCounts() map[string]int {
	m := make(map[string]int, len(t.Stories))
	for _, st := range t.Stories {
		d, _ := st.Counts()
		m[st.ID] = d
	}
	return m
}

// TickedSince names the stories but except that have more tasks done than before (a
// DoneCounts) says they had, in order.
func (t Tasks) TickedSince(before map[string]int, except string) []string {
	var stories []string
	for _, st := range t.Stories {
		if st.ID == except {
			continue
		}
		if d, _ := st.Counts(); d > before[st.ID] {
			stories = append(stories, st.ID)
		}
	}
	return stories
}
