"""One module per report section; each builds its part of the report from `reports.rows.Rows`."""
