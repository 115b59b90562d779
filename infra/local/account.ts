/** The account and region every local ARN and endpoint uses. */
export const LOCAL_REGION = "us-east-1";
export const LOCAL_ACCOUNT = "000000000000";
