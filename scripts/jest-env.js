// Every test (and every process a test starts) checks each appended event against proto/.
process.env.SF_VALIDATE_EVENTS = '1';
