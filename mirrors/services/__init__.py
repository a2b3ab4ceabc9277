"""State changes and side effects of the domain: the API, dashboard and tasks all call these."""
