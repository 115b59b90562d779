/**
 * A run's input is counted in UTF-8 bytes (`MAX_INPUT_BYTES`): 96,000 by default, the 32,000
 * characters of Chinese, Japanese or Korean the limit once counted. At most 200,000, so a request
 * with its input stays within the API's 256 KiB JSON body; an input over 100,000 bytes is kept
 * whole as the run file `input.md`, its record holding the beginning (a DynamoDB item is 400 KB).
 */
export const DEFAULT_MAX_INPUT_BYTES = 96_000;
export const MAX_INPUT_BYTES_CEILING = 200_000;
/** The run file that holds an input too long for the run's record. */
export const INPUT_FILE_NAME = "input.md";
