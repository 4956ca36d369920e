"""Deploy: the tools a user's own account sees. SAM's and CDK's locks, the Serverless Framework's
package lock (serverless/), and verify_aws with its stack (verify-aws/): the demo's experiment run
on AWS. Imports the lab's report code, no other tools room."""
