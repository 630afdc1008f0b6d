/**
 * cdk-nag for this app: the rule packs (`addNagChecks`) and the findings every scheduled job (and
 * its console test events' custom-resource provider) acknowledges live in the package
 * (@contest-sync/scheduled-singleton); everything else the packs flag is fixed in the stack.
 */
export { addNagChecks } from '@contest-sync/scheduled-singleton/nag';
export {
  acknowledgeCustomResourceProviderNagFindings,
  acknowledgeEmailSubscription,
  acknowledgeJobNagFindings,
  type NagJobParts,
} from '@contest-sync/scheduled-singleton/cdk';
