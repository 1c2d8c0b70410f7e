"""The proctoring and adjudication service: webhooks, storage, adjudication, incidents and the command line."""
